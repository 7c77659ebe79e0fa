//! The OpenAI Responses wire format: request bodies (instructions and input items), the
//! streamed events, complete responses and error bodies. No I/O here.
//!
//! Requests are sent with `store: false`, so the server keeps nothing between turns: every
//! request carries the whole conversation, and the model's reasoning comes back as the
//! encrypted reasoning items the server gave (`include: ["reasoning.encrypted_content"]`),
//! placed before the function calls of the turn they belong to. `request.rs` builds request
//! bodies; this file reads what comes back.

use std::collections::HashMap;
use std::time::Duration;

use eventsource_stream::Event;
use serde_json::Value;

use crate::error::LlmError;
use crate::formats::sse::SseDecoder;
use crate::formats::{ErrorInfo, looks_like_context_overflow};
use crate::types::{ChatEvent, ChatResponse, Reasoning, ToolCall, Usage};

mod request;
mod search;

pub(crate) use request::{ReasoningOptions, request_body};
pub(crate) use search::{read_response as read_search, search_body};

fn string(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_string)
}

/// Usage from a Responses `usage` object: `input_tokens` counts the cached ones too.
fn usage_of(usage: &Value) -> Usage {
    let field = |name: &str| usage.get(name).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        prompt_tokens: field("input_tokens"),
        completion_tokens: field("output_tokens"),
        cached_tokens: usage
            .pointer("/input_tokens_details/cached_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        estimated: false,
    }
}

/// The reasoning a `reasoning` output item carries.
fn reasoning_of(item: &Value) -> Reasoning {
    let summary = item
        .get("summary")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|part| string(part, "text"))
        .collect();
    Reasoning::Item {
        id: string(item, "id").unwrap_or_default(),
        summary,
        encrypted_content: string(item, "encrypted_content"),
    }
}

/// The finish reason of a finished response object, in chat-completions words: `tool_calls`,
/// `stop`, or `length` / `content_filter` for an incomplete one.
fn finish_reason(response: &Value, has_tool_calls: bool) -> String {
    match response
        .pointer("/incomplete_details/reason")
        .and_then(Value::as_str)
    {
        Some("max_output_tokens") => "length".into(),
        Some(other) => other.into(),
        None if has_tool_calls => "tool_calls".into(),
        None => "stop".into(),
    }
}

/// How long a rate-limit message asks to wait: "Please try again in 1.5s" or "in 250ms".
fn retry_hint(message: &str) -> Option<Duration> {
    let rest = &message[message.find("try again in ")? + "try again in ".len()..];
    let number: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let value: f64 = number.parse().ok()?;
    let unit = &rest[number.len()..];
    let seconds = if unit.starts_with("ms") {
        value / 1000.0
    } else if unit.starts_with('s') {
        value
    } else {
        return None;
    };
    Duration::try_from_secs_f64(seconds).ok()
}

/// The error an `error` event or a failed response's `error` object stands for.
fn error_of(error: &Value) -> LlmError {
    let message = string(error, "message").unwrap_or_else(|| error.to_string());
    let code = error.get("code").and_then(Value::as_str);
    if looks_like_context_overflow(code, &message) {
        return LlmError::ContextWindowExceeded { message };
    }
    match code {
        Some("rate_limit_exceeded") => LlmError::RateLimited {
            retry_after: retry_hint(&message),
            message,
        },
        Some("invalid_api_key" | "insufficient_permissions") => LlmError::Authentication {
            status: 401,
            message,
        },
        Some(code) if code.starts_with("invalid_") || code == "insufficient_quota" => {
            LlmError::BadRequest { status: 0, message }
        }
        _ => LlmError::Server { status: 0, message },
    }
}

/// Reads a complete (non-streaming) response object.
pub(crate) fn parse_response(body: &str) -> Result<ChatResponse, LlmError> {
    let value: Value = serde_json::from_str(body)
        .map_err(|err| LlmError::malformed(format!("invalid response object: {err}")))?;
    if let Some(error) = value.get("error").filter(|error| !error.is_null()) {
        return Err(error_of(error));
    }
    let output = value
        .get("output")
        .and_then(Value::as_array)
        .ok_or_else(|| LlmError::malformed("the response has no output"))?;
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    let mut reasoning = Vec::new();
    for item in output {
        match item.get("type").and_then(Value::as_str) {
            Some("message") => {
                for part in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if part.get("type").and_then(Value::as_str) == Some("output_text") {
                        text.push_str(part.get("text").and_then(Value::as_str).unwrap_or(""));
                    }
                }
            }
            Some("function_call") => tool_calls.push(ToolCall {
                id: string(item, "call_id")
                    .ok_or_else(|| LlmError::malformed("a function_call item has no call_id"))?,
                name: string(item, "name")
                    .ok_or_else(|| LlmError::malformed("a function_call item has no name"))?,
                arguments: string(item, "arguments").unwrap_or_default(),
            }),
            Some("reasoning") => reasoning.push(reasoning_of(item)),
            _ => {}
        }
    }
    Ok(ChatResponse {
        finish_reason: Some(finish_reason(&value, !tool_calls.is_empty())),
        text: (!text.is_empty()).then_some(text),
        tool_calls,
        usage: value.get("usage").filter(|u| !u.is_null()).map(usage_of),
        response_id: string(&value, "id"),
        model: string(&value, "model"),
        reasoning,
    })
}

/// Reads an error body: `{"error": {"message", "type", "code"}}`, or any text.
pub(crate) fn parse_error(body: &str) -> ErrorInfo {
    let value: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let error = value.get("error").unwrap_or(&value);
    let message = string(error, "message").unwrap_or_else(|| body.trim().to_string());
    let code = error.get("code").and_then(Value::as_str);
    ErrorInfo::new(message, code)
}

/// A function call being streamed.
#[derive(Debug)]
struct OpenCall {
    /// Its position among this response's tool calls.
    index: usize,
    /// Whether any argument fragment arrived (else the whole arguments are taken from the
    /// finished item).
    saw_arguments: bool,
}

/// Decodes a Responses stream: typed events from `response.created` to `response.completed`
/// (or `response.incomplete`, `response.failed`, `error`).
#[derive(Debug, Default)]
pub(crate) struct StreamDecoder {
    /// Output index to the function call streamed there.
    calls: HashMap<u64, OpenCall>,
    /// Item id to output index, for events that name only the item.
    item_ids: HashMap<String, u64>,
    tool_count: usize,
    started: bool,
    done: bool,
}

impl StreamDecoder {
    fn call_at(&mut self, data: &Value) -> Option<&mut OpenCall> {
        let index = data
            .get("output_index")
            .and_then(Value::as_u64)
            .or_else(|| {
                let id = data.get("item_id").and_then(Value::as_str)?;
                self.item_ids.get(id).copied()
            })?;
        self.calls.get_mut(&index)
    }

    fn item_added(&mut self, data: &Value, events: &mut Vec<ChatEvent>) {
        let item = data.get("item").unwrap_or(&Value::Null);
        if item.get("type").and_then(Value::as_str) != Some("function_call") {
            return;
        }
        let output_index = data
            .get("output_index")
            .and_then(Value::as_u64)
            .unwrap_or(self.tool_count as u64);
        let index = self.tool_count;
        self.tool_count += 1;
        if let Some(id) = string(item, "id") {
            self.item_ids.insert(id, output_index);
        }
        let id = string(item, "call_id")
            .or_else(|| string(item, "id"))
            .unwrap_or_else(|| format!("call_{index}"));
        events.push(ChatEvent::ToolCallStart {
            index,
            id,
            name: string(item, "name").unwrap_or_default(),
        });
        let mut saw_arguments = false;
        if let Some(arguments) = string(item, "arguments").filter(|a| !a.is_empty()) {
            saw_arguments = true;
            events.push(ChatEvent::ToolCallArgs {
                index,
                fragment: arguments,
            });
        }
        self.calls.insert(
            output_index,
            OpenCall {
                index,
                saw_arguments,
            },
        );
    }

    fn item_done(&mut self, data: &Value, events: &mut Vec<ChatEvent>) {
        let item = data.get("item").unwrap_or(&Value::Null);
        match item.get("type").and_then(Value::as_str) {
            Some("reasoning") => events.push(ChatEvent::ReasoningBlock(reasoning_of(item))),
            Some("function_call") => {
                if let Some(call) = self.call_at(data).filter(|call| !call.saw_arguments)
                    && let Some(arguments) = string(item, "arguments").filter(|a| !a.is_empty())
                {
                    call.saw_arguments = true;
                    events.push(ChatEvent::ToolCallArgs {
                        index: call.index,
                        fragment: arguments,
                    });
                }
            }
            _ => {}
        }
    }

    fn finished(&mut self, data: &Value, events: &mut Vec<ChatEvent>) {
        self.done = true;
        let response = data.get("response").unwrap_or(&Value::Null);
        if let Some(usage) = response.get("usage").filter(|u| !u.is_null()) {
            events.push(ChatEvent::Usage(usage_of(usage)));
        }
        events.push(ChatEvent::Finish {
            reason: finish_reason(response, self.tool_count > 0),
        });
    }
}

impl SseDecoder for StreamDecoder {
    fn decode(&mut self, event: &Event) -> Result<Vec<ChatEvent>, LlmError> {
        let data = event.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(Vec::new());
        }
        let data: Value = serde_json::from_str(data)
            .map_err(|err| LlmError::malformed(format!("invalid stream event {data:?}: {err}")))?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(event.event.as_str());
        let mut events = Vec::new();
        if !self.started && kind != "error" {
            self.started = true;
            let response = data.get("response").unwrap_or(&Value::Null);
            events.push(ChatEvent::Started {
                response_id: string(response, "id"),
                model: string(response, "model"),
            });
        }
        let delta = || string(&data, "delta").filter(|delta| !delta.is_empty());
        match kind {
            "response.output_item.added" => self.item_added(&data, &mut events),
            "response.output_item.done" => self.item_done(&data, &mut events),
            "response.output_text.delta" => events.extend(delta().map(ChatEvent::Text)),
            "response.reasoning_summary_text.delta" => {
                events.extend(delta().map(ChatEvent::ReasoningPreview));
            }
            // Summary parts are paragraphs; the preview separates them as the block does.
            "response.reasoning_summary_part.added"
                if data.get("summary_index").and_then(Value::as_u64) > Some(0) =>
            {
                events.push(ChatEvent::ReasoningPreview("\n\n".into()));
            }
            "response.function_call_arguments.delta" => {
                if let Some(fragment) = delta()
                    && let Some(call) = self.call_at(&data)
                {
                    call.saw_arguments = true;
                    events.push(ChatEvent::ToolCallArgs {
                        index: call.index,
                        fragment,
                    });
                }
            }
            "response.completed" | "response.incomplete" => self.finished(&data, &mut events),
            "response.failed" => {
                let error = data.pointer("/response/error").unwrap_or(&Value::Null);
                return Err(error_of(error));
            }
            "error" => return Err(error_of(data.get("error").unwrap_or(&data))),
            _ => {}
        }
        Ok(events)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn end(&mut self) -> Result<Vec<ChatEvent>, LlmError> {
        if self.done {
            Ok(Vec::new())
        } else {
            Err(LlmError::malformed(
                "the stream ended before the response was complete",
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{ChatMessage, ChatRequest, ToolSpec};
    use serde_json::json;

    #[test]
    fn request_bodies_follow_the_wire_format() {
        let reasoning = Reasoning::Item {
            id: "rs_1".into(),
            summary: vec!["Look first.".into()],
            encrypted_content: Some("enc".into()),
        };
        let mut request = ChatRequest::new(
            "gpt-5",
            vec![
                ChatMessage::system("static"),
                ChatMessage::system("plan"),
                ChatMessage::user("hi"),
                ChatMessage::Assistant {
                    text: Some("Reading.".into()),
                    tool_calls: vec![ToolCall::new("call_1", "f", "{}")],
                    reasoning: vec![
                        reasoning,
                        Reasoning::Text {
                            field: "reasoning_content".into(),
                            text: "from another server".into(),
                        },
                    ],
                },
                ChatMessage::tool_result("call_1", "ok"),
                ChatMessage::system("later note"),
            ],
        )
        .with_tools(vec![ToolSpec::new(
            "f",
            "does f",
            json!({"type": "object"}),
        )]);
        request.max_tokens = Some(10);
        request.temperature = Some(0.5);
        request.stop = vec!["END".into()];
        let options = ReasoningOptions {
            effort: Some("low"),
            summary: Some("auto"),
        };
        let body = request_body(&request, &options);
        assert_eq!(body["instructions"], "static\n\nplan");
        let kinds: Vec<&str> = body["input"]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| item["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "message",
                "reasoning",
                "message",
                "function_call",
                "function_call_output",
                "message"
            ]
        );
        assert_eq!(
            body["input"][1],
            json!({"type": "reasoning", "id": "rs_1", "encrypted_content": "enc",
                "summary": [{"type": "summary_text", "text": "Look first."}]})
        );
        assert_eq!(body["input"][3]["call_id"], "call_1");
        assert_eq!(body["input"][4]["output"], "ok");
        assert_eq!(body["input"][5]["role"], "system");
        assert_eq!(body["tools"][0]["name"], "f");
        assert_eq!(body["tools"][0]["strict"], false);
        assert_eq!(body["max_output_tokens"], 10);
        assert_eq!(body["store"], false);
        assert_eq!(
            body["reasoning"],
            json!({"effort": "low", "summary": "auto"})
        );
        assert!(
            body.get("temperature").is_none(),
            "reasoning models refuse it"
        );
        assert!(body.get("stop").is_none());
        request.model = "gpt-4.1".into();
        let body = request_body(&request, &options);
        assert_eq!(body["temperature"], 0.5);
        assert!(body.get("reasoning").is_none());
    }

    #[test]
    fn error_codes_map_to_variants() {
        let rate = error_of(&json!({"code": "rate_limit_exceeded",
            "message": "Rate limit reached. Please try again in 1.5s."}));
        assert_eq!(
            rate,
            LlmError::RateLimited {
                retry_after: Some(Duration::from_millis(1500)),
                message: "Rate limit reached. Please try again in 1.5s.".into(),
            }
        );
        assert_eq!(
            retry_hint("try again in 250ms"),
            Some(Duration::from_millis(250))
        );
        assert!(matches!(
            error_of(&json!({"code": "context_length_exceeded", "message": "too long"})),
            LlmError::ContextWindowExceeded { .. }
        ));
        assert!(matches!(
            error_of(&json!({"code": "invalid_prompt", "message": "no"})),
            LlmError::BadRequest { .. }
        ));
        assert!(error_of(&json!({"code": "server_error", "message": "oops"})).is_retryable());
    }
}
