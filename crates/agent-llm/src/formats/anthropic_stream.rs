//! The Anthropic Messages stream decoder: `message_start`, content blocks (text, tool use,
//! thinking with its signature, redacted thinking), `message_delta` and `message_stop` as chat
//! events. No I/O here.

use std::collections::HashMap;

use eventsource_stream::Event;
use serde_json::Value;

use crate::error::LlmError;
use crate::formats::anthropic_reply::{error_event, string, usage_of};
use crate::formats::sse::SseDecoder;
use crate::types::{ChatEvent, Reasoning, Usage};

/// Decodes a Messages stream: `message_start`, content blocks, `message_delta`,
/// `message_stop`.
#[derive(Debug, Default)]
pub(crate) struct StreamDecoder {
    /// Content-block index to position among this response's tool calls.
    tool_positions: HashMap<u64, usize>,
    /// Content-block index to the thinking block being received: its text and signature.
    thinking: HashMap<u64, (String, String)>,
    usage: Usage,
    finished: bool,
    done: bool,
}

impl StreamDecoder {
    fn block_start(&mut self, data: &Value, events: &mut Vec<ChatEvent>) {
        let block_index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        let Some(block) = data.get("content_block") else {
            return;
        };
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(text) = block
                    .get("text")
                    .and_then(Value::as_str)
                    .filter(|t| !t.is_empty())
                {
                    events.push(ChatEvent::Text(text.to_string()));
                }
            }
            Some("thinking") => {
                let thinking = string(block, "thinking").unwrap_or_default();
                if !thinking.is_empty() {
                    events.push(ChatEvent::ReasoningPreview(thinking.clone()));
                }
                let signature = string(block, "signature").unwrap_or_default();
                self.thinking.insert(block_index, (thinking, signature));
            }
            Some("redacted_thinking") => {
                events.push(ChatEvent::ReasoningBlock(Reasoning::RedactedThinking {
                    data: string(block, "data").unwrap_or_default(),
                }));
            }
            Some("tool_use") => {
                let index = self.tool_positions.len();
                self.tool_positions.insert(block_index, index);
                events.push(ChatEvent::ToolCallStart {
                    index,
                    id: string(block, "id").unwrap_or_else(|| format!("toolu_{index}")),
                    name: string(block, "name").unwrap_or_default(),
                });
                if let Some(input) = block
                    .get("input")
                    .filter(|input| input.as_object().is_some_and(|object| !object.is_empty()))
                {
                    events.push(ChatEvent::ToolCallArgs {
                        index,
                        fragment: input.to_string(),
                    });
                }
            }
            _ => {}
        }
    }

    fn block_delta(&mut self, data: &Value, events: &mut Vec<ChatEvent>) {
        let block_index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        let Some(delta) = data.get("delta") else {
            return;
        };
        match delta.get("type").and_then(Value::as_str) {
            Some("text_delta") => {
                if let Some(text) = string(delta, "text").filter(|text| !text.is_empty()) {
                    events.push(ChatEvent::Text(text));
                }
            }
            Some("thinking_delta") => {
                let piece = string(delta, "thinking").unwrap_or_default();
                if let Some((thinking, _)) = self.thinking.get_mut(&block_index)
                    && !piece.is_empty()
                {
                    thinking.push_str(&piece);
                    events.push(ChatEvent::ReasoningPreview(piece));
                }
            }
            Some("signature_delta") => {
                if let Some((_, signature)) = self.thinking.get_mut(&block_index) {
                    signature.push_str(string(delta, "signature").as_deref().unwrap_or(""));
                }
            }
            Some("input_json_delta") => {
                if let (Some(&index), Some(fragment)) = (
                    self.tool_positions.get(&block_index),
                    string(delta, "partial_json"),
                ) {
                    events.push(ChatEvent::ToolCallArgs { index, fragment });
                }
            }
            _ => {}
        }
    }
}

impl SseDecoder for StreamDecoder {
    fn decode(&mut self, event: &Event) -> Result<Vec<ChatEvent>, LlmError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(Vec::new());
        }
        let value: Value = serde_json::from_str(data)
            .map_err(|err| LlmError::malformed(format!("invalid stream event {data:?}: {err}")))?;
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(event.event.as_str());
        let mut events = Vec::new();
        match kind {
            "message_start" => {
                let message = value.get("message").unwrap_or(&Value::Null);
                if let Some(usage) = message.get("usage") {
                    self.usage = usage_of(usage);
                }
                events.push(ChatEvent::Started {
                    response_id: string(message, "id"),
                    model: string(message, "model"),
                });
            }
            "content_block_start" => self.block_start(&value, &mut events),
            "content_block_delta" => self.block_delta(&value, &mut events),
            "content_block_stop" => {
                let index = value.get("index").and_then(Value::as_u64).unwrap_or(0);
                if let Some((thinking, signature)) = self.thinking.remove(&index) {
                    events.push(ChatEvent::ReasoningBlock(Reasoning::Thinking {
                        thinking,
                        signature,
                    }));
                }
            }
            "message_delta" => {
                if let Some(usage) = value.get("usage") {
                    let update = usage_of(usage);
                    self.usage.completion_tokens = update.completion_tokens;
                    if update.prompt_tokens > 0 {
                        self.usage.prompt_tokens = update.prompt_tokens;
                        self.usage.cached_tokens = update.cached_tokens;
                    }
                    events.push(ChatEvent::Usage(self.usage));
                }
                if let Some(reason) = value
                    .get("delta")
                    .and_then(|delta| string(delta, "stop_reason"))
                {
                    self.finished = true;
                    events.push(ChatEvent::Finish { reason });
                }
            }
            "message_stop" => self.done = true,
            "error" => return Err(error_event(&value)),
            _ => {}
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
            Err(LlmError::malformed(
                "the stream ended before the message was complete",
            ))
        }
    }
}
